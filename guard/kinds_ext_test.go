package guard_test

import "github.com/codegenie/codegenie/events"

// Event kinds of a made-up pipeline, for tests of a layer that knows no
// pipeline.
const (
	kindBuilt   events.Kind = "request.built"
	kindStarted events.Kind = "job.started"
)
