package gen

type Func struct {
	name  string
	nArgs int
	idGen int
	ops   []*op
}

func (fn *Func) attach(x *op) {
	// Make sure the arguments are attached to the function.
	for _, arg := range x.args {
		argFn := arg.fn
		if argFn == nil {
			fn.attach(arg)
		} else if argFn != fn {
			panic("ops from different functions")
		}
	}

	x.fn = fn
	x.id = fn.idGen
	fn.idGen++
	fn.ops = append(fn.ops, x)
}

func Arg[W wrap[T], T Word](fn *Func) T {
	loc := locReg{cls: regClassGP, reg: fn.nArgs}
	fn.nArgs++
	var x W
	o := &op{op: "arg", kind: x.kind(), c: loc}
	fn.attach(o)
	return x.wrap(o)
}

func (fn *Func) emit(f *File, locs map[*op]loc) {
	w := f.w

	// Emit constants first
	for _, o := range fn.ops {
		if o.op == "const" {
			name := locs[o].(locMem).name
			f.emitConst(name, o.c)
		}
	}

	fmt.Fprintf(w, "TEXT %s(SB), NOSPLIT, $0-0\n", fn.name)

	// Emit body
	for _, o := range fn.ops {
		switch o.op {
		case "const", "arg", "return", "deref", "imm":
			// Does not produce code
			continue
		}
		switch o.op {
		case "addConst":
			fatalf("addConst not lowered")
		}

		opName := o.op
		// A ".mask" suffix is used to distinguish AVX-512 ops that use the same
		// mnemonic for regular and masked mode.
		opName = strings.TrimSuffix(opName, ".mask")

		fmt.Fprintf(w, "\t%s", opName)
		if o.op == "VGF2P8AFFINEQB" {
			// Hidden immediate, but always 0
			//
			// TODO: Replace this with an imm input.
			fmt.Fprintf(w, " $0,")
		}
		for i, arg := range o.args {
			if i == 0 {
				fmt.Fprintf(w, " ")
			} else {
				fmt.Fprintf(w, ", ")
			}
			if arg.op == "imm" {
				fmt.Fprintf(w, "$0x%x", arg.c)
			} else {
				fmt.Fprint(w, locs[arg].LocString())
			}
		}
		if _, ok := opRMW[o.op]; ok {
			// Read-modify-write instructions, so the output is already in the
			// arguments above.
		} else {
			fmt.Fprintf(w, ", %s", locs[o].LocString())
		}
		fmt.Fprintf(w, "\n")
	}
	fmt.Fprintf(w, "\tRET\n")
	fmt.Fprintf(w, "\n")
}
