/**
 * Two projects:
 * - `standalone`: every suite, services in-process (the default topology of the test harness).
 * - `cluster`: the API suites again, with PLINTH_TEST_TOPOLOGY=cluster, so the harness runs each
 *   service as its own process (two replicas of records and auth, Redis sessions, BullMQ) behind
 *   a gateway process. test/global-setup.js builds dist/ once before both.
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
    '^@plinth/testing/(.*)$': '<rootDir>/test/support/src/$1',
    // The CLI's suites run it from source, and the SDK it is built on with it.
    '^@plinth/client$': '<rootDir>/clients/js/src/index.ts',
    '^@plinth/client/(.*)$': '<rootDir>/clients/js/src/$1',
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
  '<rootDir>/test/browser/file-api.int.test.ts',
];

/**
 * Suites whose assertions bound a time a user would notice (a /healthz answer within 250 ms while
 * a flood runs, a query's p99, a lock wait) or that load both cores on purpose: `npm test` runs
 * them alone after the others (scripts/test.js), so another suite running beside them on a
 * 2-core machine cannot decide their outcome.
 */
const SERIAL_SUITES = [
  'services/realtime/test/catch-up-flood.int.test.ts',
  'services/realtime/test/connection-flood.int.test.ts',
  'services/realtime/test/realtime-limits.int.test.ts',
  'services/records/test/query-fair-share.int.test.ts',
  'services/records/test/query-compile-stall.int.test.ts',
  'services/records/test/api/records-query-api.int.test.ts',
  'services/records/test/api/record-limits-api.int.test.ts',
  'services/records/test/user-token-expiry.int.test.ts',
  'services/auth/test/api/timing.test.ts',
  'gateway/test/standalone-worker-kill.int.test.ts',
  'gateway/test/standalone-start.int.test.ts',
  'test/faults/shutdown-signin-backlog.test.ts',
  'test/faults/mail-outbox-disk-full.test.ts',
  // Bounds on the server's RSS while large uploads stream: in standalone the server is the jest
  // worker itself, whose memory another suite beside it would move.
  'services/records/test/api/files-attacks-api.int.test.ts',
];
const escape = (p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SERIAL = `/(${SERIAL_SUITES.map(escape).join('|')})$`;
/** PLINTH_TEST_PHASE: `parallel` runs every suite but those, `serial` only those; unset, all. */
const phaseIgnore = {
  parallel: [SERIAL],
  serial: [`^(?!.*${SERIAL})`],
}[process.env.PLINTH_TEST_PHASE ?? ''] ?? [];
common.testPathIgnorePatterns = [...common.testPathIgnorePatterns, ...phaseIgnore];

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
