// Calls the operator library cannot lower fail the pass with the library's coded message.
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-decompose))' --split-input-file --verify-diagnostics

sir.subgraph @unknown(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{E2001: paddle.nope is not a supported operator (`sotc ops` lists them)}}
  %0 = sir.call "api" "paddle.nope"(%x) {op = "paddle.nope", args = [#sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @bad_args(%x: tensor<2x3xf32>, %y: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{E2008: add(): shapes [2, 3] and [4] cannot be broadcast together}}
  %0 = sir.call "api" "paddle.add"(%x, %y) {op = "paddle.add", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []} : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  sir.output %0 : tensor<2x3xf32>
}

// -----

sir.subgraph @wrong_type(%x: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{the decomposition's result type 'tensor<2xf32>' differs from the call's 'tensor<3xf32>'}}
  %0 = sir.call "api" "paddle.exp"(%x) {op = "paddle.exp", args = [#sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<3xf32>
  sir.output %0 : tensor<3xf32>
}

// -----

// A call that derives a size the module does not list (x[:, 2:] of T: T - 2).
module attributes {sir.derived_sizes = ["s2=s1-1"]} {
  sir.subgraph @unlisted(%y: tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?x8xf32, #sir.dims<"s0", "s3">> {
    // expected-error @+1 {{derives a size the module does not list (s3=s1-2)}}
    %0 = sir.call "operator" "__getitem__"(%y) {args = [#sir.arg<0>, #sir.tuple<[#sir.slice<#sir.none, #sir.none, #sir.none>, #sir.slice<2 : i64, #sir.none, #sir.none>]>], kwargs = [], op = "__getitem__"} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?x8xf32, #sir.dims<"s0", "s3">>
    sir.output %0 : tensor<?x?x8xf32, #sir.dims<"s0", "s3">>
  }
}
