/**
 * A login given in the configuration (a `{"source": "password"}` login, or a Data API secret mapped
 * to a user): nothing to read or refresh, so a refused login is simply refused.
 */
import { type DatabaseCredentials, type DatabaseLogin, databaseLogin } from "./database-credentials.js";

export class StaticCredentials implements DatabaseCredentials {
  readonly kind = "password" as const;
  private readonly login: DatabaseLogin;

  constructor(user: string, password: string) {
    this.login = databaseLogin(user, password);
  }

  prepare(): Promise<void> {
    return Promise.resolve();
  }

  current(): Promise<DatabaseLogin> {
    return Promise.resolve(this.login);
  }

  afterAuthenticationFailure(): Promise<boolean> {
    return Promise.resolve(false);
  }
}
