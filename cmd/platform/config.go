package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// setting is one configuration knob: a flag, its environment variable and its default. The
// table of settings is the single source of the configuration reference (docs/operations.md
// is generated from it by `platform config-reference`), so documentation cannot drift.
type setting struct {
	flag, env, def, help string
	// bind defines the flag with the environment's value (or def) as its default.
	bind func(fs *pflag.FlagSet, s setting) error
}

func stringSetting(p *string, flag, env, def, help string) setting {
	return setting{flag: flag, env: env, def: def, help: help, bind: func(fs *pflag.FlagSet, s setting) error {
		fs.StringVar(p, s.flag, envOr(s.env, s.def), s.help)
		return nil
	}}
}

// parsedSetting defines settings whose text must parse: a bad environment value is an error
// naming the variable, never silently replaced by the default.
func parsedSetting[T any](p *T, flag, env string, def T, help, want string, parse func(string) (T, error), define func(fs *pflag.FlagSet, p *T, name string, v T, help string)) setting {
	return setting{flag: flag, env: env, def: fmt.Sprint(def), help: help, bind: func(fs *pflag.FlagSet, s setting) error {
		v := def
		var err error
		if raw, ok := os.LookupEnv(s.env); ok && s.env != "" {
			if v, err = parse(raw); err != nil {
				v = def
				err = fmt.Errorf("environment variable %s=%q: want %s", s.env, raw, want)
			}
		}
		define(fs, p, s.flag, v, s.help)
		return err
	}}
}

func intSetting(p *int, flag, env string, def int, help string) setting {
	return parsedSetting(p, flag, env, def, help, "a whole number", strconv.Atoi, (*pflag.FlagSet).IntVar)
}

func floatSetting(p *float64, flag, env string, def float64, help string) setting {
	parse := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	return parsedSetting(p, flag, env, def, help, "a number such as 0.85", parse, (*pflag.FlagSet).Float64Var)
}

func boolSetting(p *bool, flag, env string, def bool, help string) setting {
	return parsedSetting(p, flag, env, def, help, "true or false", strconv.ParseBool, (*pflag.FlagSet).BoolVar)
}

func durationSetting(p *time.Duration, flag, env string, def time.Duration, help string) setting {
	return parsedSetting(p, flag, env, def, help, "a duration such as 30s or 5m", time.ParseDuration, (*pflag.FlagSet).DurationVar)
}

func envOr(env, def string) string {
	if env != "" {
		if v, ok := os.LookupEnv(env); ok {
			return v
		}
	}
	return def
}

// bindAll defines the flags, taking defaults from the environment, and reports every
// environment variable whose value does not parse.
func bindAll(fs *pflag.FlagSet, settings []setting) error {
	var errs []error
	for _, s := range settings {
		if s.env != "" {
			s.help = fmt.Sprintf("%s (env %s)", s.help, s.env)
		}
		errs = append(errs, s.bind(fs, s))
	}
	return errors.Join(errs...)
}
