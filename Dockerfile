# The Keel worker image (used by docker-compose.yml).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save typescript@5.9.3 @types/node@20
COPY . .
# Production code only: tests and benches need devDependencies the image leaves out.
RUN npx tsc -p tsconfig.build.json
# Workflow bundles built now, so a worker starts without webpack (and ~95 MB lighter).
RUN node dist/workers/build-workflow-bundles.js
USER node
CMD ["node", "dist/workers/main.js"]
