/** Free local ports for servers the tests start. */
import net from "node:net";

/** A port on which nothing listens (bound, then released). */
export async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A port that is free on every one of the given loopback addresses (instances on distinct hosts sharing one port). */
export async function portFreeOn(hosts: readonly string[]): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await unusedPort();
    const free = await Promise.all(hosts.map((host) => canBind(host, port)));
    if (free.every(Boolean)) return port;
  }
  throw new Error(`no port free on all of ${hosts.join(", ")}`);
}

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
