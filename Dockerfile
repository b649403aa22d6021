# One image for every Plinth process; the command picks the service:
#   node gateway/dist/main.js | services/records/dist/main.js | services/auth/dist/main.js |
#   services/mailer/dist/main.js | services/realtime/dist/main.js | gateway/dist/standalone.js (all-in-one)
# Build: docker build -t plinth .

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 and bcrypt compile native addons when no prebuilt binary matches.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.base.json tsconfig.build.json ./
COPY protocol/package.json protocol/
COPY shared/package.json shared/
COPY gateway/package.json gateway/
COPY services/records/package.json services/records/
COPY services/auth/package.json services/auth/
COPY services/mailer/package.json services/mailer/
COPY services/realtime/package.json services/realtime/
COPY dashboard/package.json dashboard/
COPY clients/js/package.json clients/js/
COPY clients/cli/package.json clients/cli/
# Workspaces the image does not build (benchmarks, test helpers): npm ci still expects their manifests.
COPY bench/package.json bench/
COPY test/support/package.json test/support/
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3 bcrypt msgpackr-extract
COPY protocol protocol
COPY shared shared
COPY gateway gateway
COPY services services
COPY dashboard dashboard
COPY clients clients
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
# HOST: standalone listens on 127.0.0.1 by default; in a container it must accept the published port.
ENV NODE_ENV=production PLINTH_DATA_DIR=/data HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules node_modules
COPY --from=build --chown=node:node /app/shared/package.json shared/
COPY --from=build --chown=node:node /app/shared/dist shared/dist
COPY --from=build --chown=node:node /app/gateway/package.json gateway/
COPY --from=build --chown=node:node /app/gateway/dist gateway/dist
# The `plinth` CLI (scheduled backups run it) and the SDK it makes its calls with.
COPY --from=build --chown=node:node /app/clients/cli/package.json clients/cli/
COPY --from=build --chown=node:node /app/clients/cli/bin clients/cli/bin
COPY --from=build --chown=node:node /app/clients/cli/dist clients/cli/dist
COPY --from=build --chown=node:node /app/clients/js/package.json clients/js/
COPY --from=build --chown=node:node /app/clients/js/dist clients/js/dist
COPY --from=build --chown=node:node /app/services/records/package.json services/records/
COPY --from=build --chown=node:node /app/services/records/dist services/records/dist
COPY --from=build --chown=node:node /app/services/auth/package.json services/auth/
COPY --from=build --chown=node:node /app/services/auth/dist services/auth/dist
COPY --from=build --chown=node:node /app/services/mailer/package.json services/mailer/
COPY --from=build --chown=node:node /app/services/mailer/dist services/mailer/dist
COPY --from=build --chown=node:node /app/services/realtime/package.json services/realtime/
COPY --from=build --chown=node:node /app/services/realtime/dist services/realtime/dist
# The admin dashboard's static files, served by the gateway at /_/.
COPY --from=build --chown=node:node /app/dashboard/dist dashboard/dist
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
CMD ["node", "gateway/dist/standalone.js"]
