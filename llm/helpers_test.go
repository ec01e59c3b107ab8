package llm_test

import (
	"io"
	"net/http"
	"net/http/httptest"
)

func ioCopy(dst io.Writer, src io.ReadCloser) (int64, error) {
	defer src.Close()
	return io.Copy(dst, src)
}

type response struct {
	*httptest.ResponseRecorder
	req *http.Request
}

func newResponse(r *http.Request) *response {
	return &response{ResponseRecorder: httptest.NewRecorder(), req: r}
}

func (r *response) result() *http.Response {
	res := r.Result()
	res.Request = r.req
	return res
}
