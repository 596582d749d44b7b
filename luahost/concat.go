package luahost

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// `..` is compiled as a call of the host's concatenation, which checks
// the size of the string before it builds it: gopher-lua's own `..` is
// an instruction that nothing can intercept, and `s = s .. s` doubled a
// string until the process ran out of memory, far past the run's limit,
// between two samples of the watchdog. The compiler turns
// `a .. b .. c` into one call, concat(a, b, c), which builds the result
// once as the instruction did, and follows the instruction's order for
// __concat metamethods and its messages
// (docs/decisions/0108-lua-sizes.md).

// concatName is the global the calls go through; it is not a name a
// script can write, so no script calls it, or shadows it, by accident.
const concatName = "\x00concat"

// hookConcat rewrites every `..` of a chunk into a call of concatName.
func hookConcat(stmts []ast.Stmt) {
	for _, s := range stmts {
		hookStmt(s)
	}
}

func hookStmt(s ast.Stmt) {
	switch x := s.(type) {
	case *ast.AssignStmt:
		hookExprs(x.Lhs)
		hookExprs(x.Rhs)
	case *ast.LocalAssignStmt:
		hookExprs(x.Exprs)
	case *ast.FuncCallStmt:
		x.Expr = hookExpr(x.Expr)
	case *ast.DoBlockStmt:
		hookConcat(x.Stmts)
	case *ast.WhileStmt:
		x.Condition = hookExpr(x.Condition)
		hookConcat(x.Stmts)
	case *ast.RepeatStmt:
		x.Condition = hookExpr(x.Condition)
		hookConcat(x.Stmts)
	case *ast.IfStmt:
		x.Condition = hookExpr(x.Condition)
		hookConcat(x.Then)
		hookConcat(x.Else)
	case *ast.NumberForStmt:
		x.Init = hookExpr(x.Init)
		x.Limit = hookExpr(x.Limit)
		x.Step = hookExpr(x.Step)
		hookConcat(x.Stmts)
	case *ast.GenericForStmt:
		hookExprs(x.Exprs)
		hookConcat(x.Stmts)
	case *ast.FuncDefStmt:
		if x.Name != nil {
			x.Name.Func = hookExpr(x.Name.Func)
			x.Name.Receiver = hookExpr(x.Name.Receiver)
		}
		hookExpr(x.Func)
	case *ast.ReturnStmt:
		hookExprs(x.Exprs)
	}
}

func hookExprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = hookExpr(e)
	}
}

func hookExpr(e ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.StringConcatOpExpr:
		// The instruction concatenates the whole chain a .. (b .. c):
		// so does one call.
		args := []ast.Expr{hookExpr(x.Lhs)}
		rest := x.Rhs
		for {
			c, ok := rest.(*ast.StringConcatOpExpr)
			if !ok {
				break
			}
			args = append(args, hookExpr(c.Lhs))
			rest = c.Rhs
		}
		args = append(args, hookExpr(rest))
		fn := &ast.IdentExpr{Value: concatName}
		fn.SetLine(x.Line())
		fn.SetLastLine(x.LastLine())
		call := &ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true} // one value, as an expression
		call.SetLine(x.Line())
		call.SetLastLine(x.LastLine())
		return call
	case *ast.AttrGetExpr:
		x.Object = hookExpr(x.Object)
		x.Key = hookExpr(x.Key)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			f.Key = hookExpr(f.Key)
			f.Value = hookExpr(f.Value)
		}
	case *ast.FuncCallExpr:
		x.Func = hookExpr(x.Func)
		x.Receiver = hookExpr(x.Receiver)
		hookExprs(x.Args)
	case *ast.LogicalOpExpr:
		x.Lhs = hookExpr(x.Lhs)
		x.Rhs = hookExpr(x.Rhs)
	case *ast.RelationalOpExpr:
		x.Lhs = hookExpr(x.Lhs)
		x.Rhs = hookExpr(x.Rhs)
	case *ast.ArithmeticOpExpr:
		x.Lhs = hookExpr(x.Lhs)
		x.Rhs = hookExpr(x.Rhs)
	case *ast.UnaryMinusOpExpr:
		x.Expr = hookExpr(x.Expr)
	case *ast.UnaryNotOpExpr:
		x.Expr = hookExpr(x.Expr)
	case *ast.UnaryLenOpExpr:
		x.Expr = hookExpr(x.Expr)
	case *ast.FunctionExpr:
		hookConcat(x.Stmts)
	}
	return e
}

// concat is `..` over its arguments, as gopher-lua's instruction does it
// (strings and numbers joined at once, __concat right to left, the same
// messages), checking the size of each string before it is built.
func (r *run) concat(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.RaiseError("wrong number of arguments")
	}
	if n == 2 { // the common case, without the general walk
		a, aok := L.Get(1).(lua.LString)
		b, bok := L.Get(2).(lua.LString)
		if aok && bok {
			r.checkSize(L, int64(len(a))+int64(len(b)))
			L.Push(a + b)
			return 1
		}
	}
	rhs := L.Get(n)
	for i := n - 1; i >= 1; {
		lhs := L.Get(i)
		if !lua.LVCanConvToString(lhs) || !lua.LVCanConvToString(rhs) {
			op := L.GetMetaField(lhs, "__concat")
			if op == lua.LNil {
				op = L.GetMetaField(rhs, "__concat")
			}
			if op.Type() != lua.LTFunction {
				L.RaiseError("cannot perform concat operation between %v and %v", lhs.Type().String(), rhs.Type().String())
			}
			L.Push(op)
			L.Push(lhs)
			L.Push(rhs)
			L.Call(2, 1)
			rhs = L.Get(-1)
			L.Pop(1)
			i--
			continue
		}
		// Join rhs and every string or number before it at once.
		var buf [8]string
		parts := append(buf[:0], lua.LVAsString(rhs)) // last first
		size := int64(len(parts[0]))
		for ; i >= 1 && lua.LVCanConvToString(L.Get(i)); i-- {
			s := lua.LVAsString(L.Get(i))
			parts = append(parts, s)
			size += int64(len(s))
		}
		r.checkSize(L, size)
		var b strings.Builder
		b.Grow(int(size))
		for k := len(parts) - 1; k >= 0; k-- {
			b.WriteString(parts[k])
		}
		rhs = lua.LString(b.String())
	}
	L.Push(rhs)
	return 1
}
