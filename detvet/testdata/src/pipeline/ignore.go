package pipeline

import "time"

func ignoredAbove() time.Time {
	//detvet:ignore the production clock, replaced by the recorded clock in replay
	return time.Now() // tn: suppressed with a reason
}

func ignoredSameLine() time.Time {
	return time.Now() //detvet:ignore wired to events.Config.Clock only outside replay // tn
}

func bareIgnore() time.Time {
	// want +1 `//detvet:ignore needs a reason`
	//detvet:ignore
	return time.Now() // want `time\.Now reads the wall clock`
}

func ignoreTooFar() time.Time {
	//detvet:ignore a directive two lines up does not reach

	return time.Now() // want `time\.Now reads the wall clock`
}
