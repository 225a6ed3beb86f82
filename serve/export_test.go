package serve

// PerClient is perClient, for tests.
var PerClient = perClient

// CompareGiveUps is compareGiveUps, for tests.
var CompareGiveUps = compareGiveUps
