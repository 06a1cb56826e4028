// npm test: unit tests beside the code, the e2e suite on the embedded default (in-memory PGlite per file),
// and the deployment checks (Helm chart, workflows, Dockerfile: test/deploy).
/** @type {import('jest').Config} */
module.exports = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/test/**/*.e2e-spec.ts',
    '<rootDir>/test/deploy/**/*.spec.ts',
    // the JavaScript client's pure logic (packages/client)
    '<rootDir>/test/client/**/*.spec.ts',
  ],
  testEnvironment: 'node',
  // packages/client writes its relative imports with .js (ES modules in browsers and Node need it):
  // jest resolves them to the TypeScript sources
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: 'tsconfig.json',
        isolatedModules: false,
        diagnostics: { warnOnly: false, ignoreCodes: [151002] },
        astTransformers: {
          before: ['<rootDir>/test/support/swagger-transformer.js'],
        },
      },
    ],
  },
  maxWorkers: 2,
  // each e2e file boots an app with its own PGlite (WebAssembly memory the worker never gets back):
  // a worker that ran dozens of files grew past 2 GB of heap and the next PGlite start never settled.
  // A worker over this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
  // the base of test/support/timeouts.ts, which scales it by the machine's load
  testTimeout: 60000,
  setupFiles: ['<rootDir>/test/support/env.ts'],
  // one migrated PGlite dumped once per run; every test file's app starts from a copy of it
  globalSetup: '<rootDir>/test/support/embedded-template.ts',
  globalTeardown: '<rootDir>/test/support/embedded-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/support/timeouts.ts'],
};
