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
  ],
  testEnvironment: 'node',
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
  // the base of test/support/timeouts.ts, which scales it by the machine's load
  testTimeout: 60000,
  setupFiles: ['<rootDir>/test/support/env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/timeouts.ts'],
};
