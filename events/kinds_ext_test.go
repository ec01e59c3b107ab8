package events_test

import "github.com/codegenie/codegenie/events"

// Event kinds of a made-up pipeline, for tests of a layer that knows no
// pipeline.
const (
	kindClassified events.Kind = "score.classified"
	kindRequested  events.Kind = "call.requested"
	kindResponded  events.Kind = "call.responded"
	kindBuilt      events.Kind = "request.built"
	kindQueried    events.Kind = "search.queried"
	kindFailed     events.Kind = "result.failed"
	kindRanked     events.Kind = "search.ranked"
	kindStarted    events.Kind = "job.started"
	kindProduced   events.Kind = "result.produced"
)
