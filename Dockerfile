# The Keel worker image (used by docker-compose.yml), built in two stages so the image holds
# production dependencies and compiled code only: no compiler, no test or lint tooling.

# Build: every dependency, the compiler, and the workflow bundles (a worker then starts without webpack).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx tsc -p tsconfig.build.json && node dist/workers/build-workflow-bundles.js

# Run: `npm ci --omit=dev` and the build's dist/ (its bundles' manifest matches the code beside it).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
CMD ["node", "dist/workers/main.js"]
