package guard

// DeterministicID is the ID number seq that IDSource(runKey) yields, for
// the tests that check the format against its specification.
var DeterministicID = deterministicID
