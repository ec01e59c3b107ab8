// Package assign carries, in a request's context, which events lane sent
// the request and which recorded interaction answered it: events puts the
// lane there (events.Lane.Context), the harness asks for the answer and
// for the assignment rule, and the cassettes package, which picks among
// the recorded interactions that match one request, fills it in.
//
// It is machinery between those packages, kept out of their APIs, each of
// which would otherwise export it; nothing outside the module needs it.
package assign
