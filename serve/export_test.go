package serve

// PerClient is perClient, for tests.
var PerClient = perClient
