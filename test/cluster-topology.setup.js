// Jest `cluster` project: the test harness starts every service as its own process.
process.env.PLINTH_TEST_TOPOLOGY = 'cluster';
// Seven processes start before each suite's first test (about 10 s of CPU on a slow 2-core
// machine, beside the other jest worker): a hook or test gets a minute, not the default 30 s.
jest.setTimeout(60_000);
