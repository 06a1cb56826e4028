// npm run test:integration: the same e2e suite on real PostgreSQL + Redis (DATABASE_URL / REDIS_URL),
// each test file in its own database cloned from a migrated template, plus PostgreSQL-only concurrency tests.
const base = require('./jest.config');

// the base of test/support/timeouts.ts (workers inherit it)
process.env.JEST_BASE_TIMEOUT_MS = '120000';

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/**/*.e2e-spec.ts', '<rootDir>/test/**/*.int-spec.ts'],
  // the Chromium tests (CORS, the demo app) drive pages, and the OpenAPI document's tests read the
  // document, not storage: npm test runs them on the embedded database, and running them again here
  // only lengthens CI
  testPathIgnorePatterns: ['/node_modules/', '\\.browser\\.e2e-spec\\.ts$', '/test/openapi/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 120000,
};
