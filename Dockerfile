# Build stage: compile TypeScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund && npm run build

# Runtime stage: production dependencies only, non-root, read-only root filesystem friendly.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production CONNECT2ERP_CONFIG=/app/config CONNECT2ERP_JOBS=/app/jobs
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY config ./config
COPY jobs ./jobs
USER node
ENTRYPOINT ["node", "/app/bin/connect2erp.js"]
CMD ["run"]
