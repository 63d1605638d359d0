# syntax=docker/dockerfile:1
# The gateway's production image: compiled JavaScript, production dependencies only, a non-root
# user, and the RDS CA bundle for TLS to Aurora. test/integration/production-build.test.ts builds and
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
RUN npm run build:gateway

FROM node:24-bookworm-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# The patched dependencies (patches/), as the build stage's npm ci left them: patch-package is a dev tool.
COPY --from=build /app/node_modules/mysql2 ./node_modules/mysql2
COPY --from=build /app/dist ./dist
# Amazon RDS certificate authorities (all regions), trusted by Node for TLS to the database. The
# checksum pins the bundle (108 certificates, last changed by AWS on 2025-07-24): when AWS publishes a
# new one the build fails until the new bundle's SHA-256 is checked and written here.
ADD --chmod=444 --checksum=sha256:e5bb2084ccf45087bda1c9bffdea0eb15ee67f0b91646106e466714f9de3c7e3 https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem /etc/ssl/certs/rds-global-bundle.pem
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/rds-global-bundle.pem \
    HOST=0.0.0.0 \
    PORT=8080
USER node
EXPOSE 8080
STOPSIGNAL SIGTERM
CMD ["node", "dist/gateway/main.js"]
