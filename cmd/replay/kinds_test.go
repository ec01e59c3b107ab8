package main

import "github.com/codegenie/codegenie/events"

// The fallback pipeline's kinds, which the state command reads.
const (
	kindRequested events.Kind = "llm.requested"
	kindResponded events.Kind = "llm.responded"
	kindBuilt     events.Kind = "prompt.built"
	kindStarted   events.Kind = "run.started"
	kindProduced  events.Kind = "transform.produced"
)
