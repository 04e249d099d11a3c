# syntax=docker/dockerfile:1
# The production image: one image for every role (ROLE=all|api|worker|projector).
#
#   docker build -t media-gateway:local .
#   docker run --rm -p 3000:3000 -v gateway-data:/data media-gateway:local
#
# Node 22 (maintenance LTS); why not 20, see docs/decisions/0090-node-22-in-the-image.md. Build and runtime share the base
# so better-sqlite3's compiled binary matches the runtime's Node ABI and glibc.
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: every dependency, the TypeScript compiled to dist/, then dev dependencies pruned ----
FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# node-gyp builds against the headers this image ships instead of downloading them.
ENV npm_config_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
RUN npm run build
# The web console: Vite builds console/ into console/dist/, static files the gateway serves at /console.
COPY console ./console
RUN npm run console:build
# Production dependencies only, keeping the better-sqlite3 binary compiled above.
RUN npm prune --omit=dev --no-audit --no-fund

# ---- runtime: compiled JavaScript, the console's files, production node_modules, no compiler, no npm in the process tree ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
# package.json says "type": "module": without it Node would load dist/ as CommonJS.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
# The embedded stores, the assets and the generated signing secret live in DATA_DIR, owned by
# the unprivileged `node` user (uid 1000) the official image provides.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
# Node itself (slim images have no curl): 0 when /readyz answers 200 within the timeout.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form, node as PID 1: SIGTERM from `docker stop` reaches the gateway, which drains and exits 0.
# The base image's entrypoint (docker-entrypoint.sh, a shell script) is cleared so nothing wraps it.
ENTRYPOINT []
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
