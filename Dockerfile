# connect2erp image: `docker build -t connect2erp:0.1.0 .`, then
#   docker run --rm -e NUXEO_PASSWORD -e SAP_PASSWORD -v "$PWD/config:/app/config:ro" -v "$PWD/jobs:/app/jobs:ro" \
#     --read-only connect2erp:0.1.0 run --dry-run
# See README, "Operating".

# Node.js 26, the Active LTS line since 2026-10-28 (supported until 2029-04-30); the code itself
# needs 20.18.1 or later (package.json "engines"), which is what CI tests on.
# Build stage: bundle the program with its libraries (deploy/bundle.mjs, esbuild, straight from the
# TypeScript sources): a per-minute CronJob loads a few files instead of some 150 modules and their
# libraries' (BENCHMARKS.md, "Start-up"). It installs the program's dependencies as the lock file
# has them, without the dev ones, and the bundler alone (deploy/package.json: the same esbuild as
# the project's): 82 packages and esbuild, where the dev ones made 715. Type-checking is CI's
# (.ci/run), on every commit.
FROM node:26-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY deploy/package.json deploy/package-lock.json ./deploy/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm ci --prefix deploy --ignore-scripts --no-audit --no-fund
# The product only: the sandboxes (sandbox/) are not copied, built or shipped.
COPY src ./src
COPY common ./common
COPY deploy/bundle.mjs deploy/undici-entry.cjs ./deploy/
RUN node deploy/bundle.mjs

# Runtime stage: the bundle only, with the libraries inside it: no node_modules. Nothing is written
# to the image's file system at run time, so it runs with a read-only root file system;
# reports (--report, --report-html) go to a mounted folder such as /tmp.
FROM node:26-trixie-slim
WORKDIR /app
ENV NODE_ENV=production CONNECT2ERP_CONFIG=/app/config CONNECT2ERP_JOBS=/app/jobs CONNECT2ERP_CRONTAB=/app/crontab
# "type": "module" for the bundle's files, and the version --version prints.
COPY package.json ./
COPY --from=build /app/dist/bundle ./dist/bundle
# The facet declarations the job reads ship with the program, outside the folders users mount over.
COPY nuxeo-package ./nuxeo-package
# Example configuration (it points at the sandboxes' addresses); mount your own over /app/config,
# /app/jobs and /app/crontab.
COPY config ./config
COPY jobs ./jobs
COPY crontab ./crontab
# The image's `node` user, numeric so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
# `serve`, the ArchiveLink content server, listens here (contentServer.yaml, listen.port).
EXPOSE 8090
ENTRYPOINT ["node", "/app/dist/bundle/main.js"]
CMD ["run"]
