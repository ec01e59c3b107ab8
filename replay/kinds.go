package replay

import "github.com/codegenie/codegenie/events"

// The fallback pipeline's kinds, until state reconstruction moves to the
// pipeline's side (a caller-supplied fold).
const (
	kindClassified events.Kind = "band.classified"
	kindRequested  events.Kind = "llm.requested"
	kindResponded  events.Kind = "llm.responded"
	kindBuilt      events.Kind = "prompt.built"
	kindQueried    events.Kind = "retrieval.queried"
	kindRanked     events.Kind = "retrieval.ranked"
	kindStarted    events.Kind = "run.started"
	kindFailed     events.Kind = "transform.failed"
	kindProduced   events.Kind = "transform.produced"
)
