# forkwatch detector and demo image.
#   docker build -t forkwatch .
#   docker run -p 4318:4318 -p 9464:9464 -v fw:/data forkwatch serve
# better-sqlite3 compiles from source when no prebuilt binary matches, hence the build tools in
# the build stage only.

FROM node:24-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/instrumentation/package.json ./packages/instrumentation/
RUN npm ci
COPY tsconfig.json tsconfig.base.json ./
COPY packages/instrumentation ./packages/instrumentation
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    FORKWATCH_DB=/data/forkwatch.db
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/instrumentation/package.json ./packages/instrumentation/
COPY --from=build /app/packages/instrumentation/dist ./packages/instrumentation/dist
COPY package.json ./
COPY docs ./docs
# A wrapper rather than a symlink: works whether or not dist/cli/bin.js is executable.
RUN printf '#!/bin/sh\nexec node /app/dist/cli/bin.js "$@"\n' > /usr/local/bin/forkwatch \
 && chmod 0755 /usr/local/bin/forkwatch \
 && mkdir -p /data && chown node:node /data
USER node
VOLUME /data
# 4318 OTLP/HTTP, 9464 API + /metrics
EXPOSE 4317 4318 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.FORKWATCH_HTTP_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["forkwatch"]
CMD ["serve"]
