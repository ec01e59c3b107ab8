package fallback

import "github.com/codegenie/codegenie/events"

// The kinds of the events Tier.Run records, in the order of a successful
// run (see the package documentation for their payloads).
const (
	KindRunStarted        events.Kind = "run.started"
	KindRetrievalQueried  events.Kind = "retrieval.queried"
	KindRetrievalRanked   events.Kind = "retrieval.ranked"
	KindBandClassified    events.Kind = "band.classified"
	KindPromptBuilt       events.Kind = "prompt.built"
	KindLLMRequested      events.Kind = "llm.requested"
	KindLLMResponded      events.Kind = "llm.responded"
	KindTransformProduced events.Kind = "transform.produced"
	KindTransformFailed   events.Kind = "transform.failed"
)
