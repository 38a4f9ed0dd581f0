# syntax=docker/dockerfile:1
# The Kairos apps in production form: compiled JavaScript on Node 24, run as a non-root user.
#   docker build -t kairos .
#   docker run --rm kairos apps/api/dist/main.js        (api | delay-tier | tracker | ingest)
#   docker run --rm kairos ops/dist/bootstrap-main.js   (prepares a cluster: migrations, topics, connector)
# Every app reads its KAIROS_* settings (README: "Production form"); docker-compose.yml runs them all.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund
# Only what runs: every package's manifest and compiled output, its run-time files (migrations,
# Lua scripts, Avro schemas, connector configs) and the production dependencies.
RUN mkdir -p /out \
 && for d in libs/* apps/* schemas ops; do \
      mkdir -p "/out/$d" && cp "$d/package.json" "/out/$d/" && cp -r "$d/dist" "/out/$d/"; \
    done \
 && cp -r libs/db/migrations /out/libs/db/ \
 && cp schemas/*.avsc /out/schemas/ \
 && cp -r connectors package.json LICENSE /out/ \
 && cp -r node_modules /out/ \
 && find /out -name '*.map' -delete -o -name '*.d.ts' -delete -o -name '*.tsbuildinfo' -delete

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /kairos
COPY --from=build --chown=root:root /out/ ./
USER node
# The listeners bind 127.0.0.1 unless told otherwise; in a container they must take all interfaces.
ENV KAIROS_API_HOST=0.0.0.0 \
    KAIROS_DELAY_TIER_ADMIN_HOST=0.0.0.0 \
    KAIROS_TRACKER_METRICS_HOST=0.0.0.0 \
    KAIROS_INGEST_METRICS_HOST=0.0.0.0
ENTRYPOINT ["node"]
CMD ["apps/api/dist/main.js"]
