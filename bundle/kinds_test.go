package bundle

import (
	"github.com/codegenie/codegenie/events"
)

// Made-up kinds for the tests: the bundle package knows no pipeline's.
const (
	kindStarted    events.Kind = "step.start"
	kindQueried    events.Kind = "step.query"
	kindRanked     events.Kind = "step.rank"
	kindClassified events.Kind = "step.classify"
	kindBuilt      events.Kind = "step.build"
	kindRequested  events.Kind = "step.request"
	kindResponded  events.Kind = "step.respond"
	kindProduced   events.Kind = "step.produce"
	kindFailed     events.Kind = "step.fail"
)
