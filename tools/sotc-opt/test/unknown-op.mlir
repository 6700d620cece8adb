// RUN: not sotc-opt %s 2>&1 | FileCheck %s
// CHECK: error: operation being parsed with an unregistered dialect
func.func @f() {
  "nosuch.op"() : () -> ()
  return
}
