package collection

import (
	"errors"
	"fmt"

	"github.com/satchel-dev/satchel/internal/errs"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func asValidation(err error, target **errs.ValidationError) bool { return errors.As(err, target) }
