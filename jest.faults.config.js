// npm run test:faults: the fault-and-abuse suite (issue 11). Each file starts its own PostgreSQL cluster
// and Redis on free ports and runs the built service (dist/) as two API instances and a worker, then
// kills, restarts and floods them. One file at a time: each runs three service processes already.
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'],
  maxWorkers: 1,
  // the services under test run from dist/ on their own PostgreSQL: no embedded template
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 180000,
};
