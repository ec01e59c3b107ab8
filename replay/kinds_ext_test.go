package replay_test

import "github.com/codegenie/codegenie/events"

// The fallback pipeline's kinds, which State reads, until state
// reconstruction moves to the pipeline's side (a caller-supplied fold).
const (
	kindClassified events.Kind = "band.classified"
	kindResponded  events.Kind = "llm.responded"
	kindBuilt      events.Kind = "prompt.built"
	kindStarted    events.Kind = "run.started"
	kindProduced   events.Kind = "transform.produced"
)
