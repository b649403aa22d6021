/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  testMatch: ['**/?(*.)test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  moduleNameMapper: {
    '^@plinth/shared$': '<rootDir>/shared/src/index.ts',
    '^@plinth/shared/(.*)$': '<rootDir>/shared/src/$1',
    '^@plinth/records$': '<rootDir>/services/records/src/index.ts',
    '^@plinth/auth$': '<rootDir>/services/auth/src/index.ts',
    '^@plinth/mailer$': '<rootDir>/services/mailer/src/index.ts',
    '^@plinth/gateway$': '<rootDir>/gateway/src/index.ts',
    '^@plinth/gateway/(.*)$': '<rootDir>/gateway/src/$1',
  },
  testTimeout: 30000,
  globalSetup: '<rootDir>/test/global-setup.js',
};
