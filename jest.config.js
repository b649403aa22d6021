/**
 * Two projects:
 * - `standalone`: every suite, services in-process (the default topology of the test harness).
 * - `cluster`: the API suites again, with PLINTH_TEST_TOPOLOGY=cluster, so the harness runs each
 *   service as its own process (two replicas of records and auth, Redis sessions, BullMQ) behind
 *   a gateway process (issue 7). test/global-setup.js builds dist/ once before both.
 */
/** ES-module-only packages the auth service imports (docs/auth.md "Sign-in with a provider"). */
const ESM_PACKAGES = '/node_modules/(openid-client|oauth4webapi|jose)/';

const common = {
  testEnvironment: 'node',
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // openid-client and its two libraries ship only as ES modules; jest loads CommonJS.
    [`${ESM_PACKAGES}.+\\.js$`]: ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(openid-client|oauth4webapi|jose)/)`],
  moduleNameMapper: {
    '^@plinth/shared$': '<rootDir>/shared/src/index.ts',
    '^@plinth/shared/(.*)$': '<rootDir>/shared/src/$1',
    '^@plinth/records$': '<rootDir>/services/records/src/index.ts',
    '^@plinth/auth$': '<rootDir>/services/auth/src/index.ts',
    '^@plinth/mailer$': '<rootDir>/services/mailer/src/index.ts',
    '^@plinth/realtime$': '<rootDir>/services/realtime/src/index.ts',
    '^@plinth/gateway$': '<rootDir>/gateway/src/index.ts',
    '^@plinth/gateway/(.*)$': '<rootDir>/gateway/src/$1',
  },
  testTimeout: 30000,
};

/** The suites that reach Plinth only through the harness' gateway, so they run in both topologies. */
const CLUSTER_SUITES = [
  '<rootDir>/gateway/test/gateway.int.test.ts',
  '<rootDir>/gateway/test/project-purge.int.test.ts',
  '<rootDir>/gateway/test/dashboard-static.int.test.ts',
  '<rootDir>/services/records/test/api/**/*.test.ts',
  '<rootDir>/services/realtime/test/realtime.int.test.ts',
  '<rootDir>/services/realtime/test/project-deletion.int.test.ts',
  '<rootDir>/services/realtime/test/key-revocation.int.test.ts',
  '<rootDir>/test/browser/oauth-sign-in.int.test.ts',
];

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: '<rootDir>/test/global-setup.js',
  testTimeout: 30000,
  projects: [
    { ...common, displayName: 'standalone', testMatch: ['<rootDir>/**/?(*.)test.ts'] },
    {
      ...common,
      displayName: 'cluster',
      testMatch: CLUSTER_SUITES,
      setupFiles: ['<rootDir>/test/cluster-topology.setup.js'],
    },
  ],
};
