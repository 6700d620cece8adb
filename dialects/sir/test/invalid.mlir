// Verifier errors of the sir dialect.
// RUN: sotc-opt %s --split-input-file --verify-diagnostics

sir.subgraph @bad_kind(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{kind must be "api", "method" or "operator", not "layer"}}
  %0 = sir.call "layer" "f"(%x) {args = [#sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @unreferenced(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{tensor operand 0 is referenced 0 times in args/kwargs (expected once)}}
  %0 = sir.call "api" "paddle.exp"(%x) {args = [], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @twice(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{tensor operand 0 is referenced 2 times}}
  %0 = sir.call "api" "paddle.add"(%x) {args = [#sir.arg<0>, #sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @past_end(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{argument #sir.arg<3> refers past the 1 tensor operands}}
  %0 = sir.call "api" "paddle.exp"(%x) {args = [#sir.arg<3>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @method_self(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{a method call's first argument must be a tensor}}
  %0 = sir.call "method" "sum"(%x) {args = [1, #sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @bad_kwargs(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{kwargs must hold #sir.kw<name, value> entries}}
  %0 = sir.call "api" "paddle.exp"(%x) {args = [#sir.arg<0>], kwargs = [1]} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @wrong_output(%x: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result types do not match the subgraph's result types}}
  sir.output %x : tensor<2xf32>
}

// -----

func.func @outside(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expects parent op 'sir.subgraph'}}
  sir.output %x : tensor<2xf32>
}

// -----

sir.subgraph @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of any type values}}
  %0 = sir.call "api" "paddle.exp"(%x) {args = [#sir.arg<0>], kwargs = []} : (tensor<*xf32>) -> tensor<*xf32>
  sir.output %0 : tensor<*xf32>
}
