# The gateway's production image: compiled JavaScript, production dependencies only, a non-root
# user, and the RDS CA bundle for TLS to Aurora. test/integration/production-build.test.ts builds and
# starts the gateway the same way (there is no Docker engine on the development machines).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.gateway.json ./
COPY schemas schemas
COPY gateway gateway
COPY client client
RUN npm run build:gateway

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Amazon RDS certificate authorities (all regions), trusted by Node for TLS to the database.
ADD --chmod=444 https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem /etc/ssl/certs/rds-global-bundle.pem
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/rds-global-bundle.pem \
    HOST=0.0.0.0 \
    PORT=8080
USER node
EXPOSE 8080
STOPSIGNAL SIGTERM
CMD ["node", "dist/gateway/main.js"]
