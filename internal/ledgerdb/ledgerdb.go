package ledgerdb

import (
	"errors"
	"net/url"
	"strings"
)

// ErrBadDSN: a ledger was named by something that is neither a path nor
// the URL of a store whose driver is linked.
var ErrBadDSN = errors.New("ledger: bad DSN")

// MaxEntryBytes bounds one stored entry. A longer record is refused on
// append and reported as damaged when read, so a hostile ledger cannot make
// a reader buffer without bound.
const MaxEntryBytes = 1 << 20

// IsPostgres reports whether dsn names a PostgreSQL ledger.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// RedactDSN returns dsn with any password replaced by "xxxxx", for
// messages: a DSN's secret never reaches output.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		if strings.Contains(dsn, "://") {
			return "<unparsable DSN>"
		}
		return dsn
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
