package gateway

import (
	"errors"

	"github.com/pitboss/pitboss/domain"
)

// checkText is domain.CheckText as this package's FieldError: free text of
// at most max characters, valid UTF-8, one line without control
// characters. Names, labels and descriptions are shown in consoles, logs
// and terminals, so a control character or a line break in one could
// forge a line or move a cursor there.
func checkText(field, v string, max int) error {
	var fe *domain.FieldError
	if err := domain.CheckText(field, v, max); errors.As(err, &fe) {
		return fieldError(fe.Field, fe.Message)
	}
	return nil
}
