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
