// Jest `cluster` project: the test harness starts every service as its own process.
process.env.PLINTH_TEST_TOPOLOGY = 'cluster';
