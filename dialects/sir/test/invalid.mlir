// Verifier errors of the sir dialect.
// RUN: sotc-opt %s --split-input-file --verify-diagnostics

sir.subgraph @bad_kind(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{kind must be "api", "method" or "operator", not "layer"}}
  %0 = sir.call "layer" "f"(%x) {op = "f", args = [#sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @unreferenced(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{tensor operand 0 is referenced 0 times in args/kwargs (expected once)}}
  %0 = sir.call "api" "paddle.exp"(%x) {op = "paddle.exp", args = [], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @twice(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{tensor operand 0 is referenced 2 times}}
  %0 = sir.call "api" "paddle.add"(%x) {op = "paddle.add", args = [#sir.arg<0>, #sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @past_end(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{argument #sir.arg<3> refers past the 1 tensor operands}}
  %0 = sir.call "api" "paddle.exp"(%x) {op = "paddle.exp", args = [#sir.arg<3>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @method_self(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{a method call's first argument must be a tensor}}
  %0 = sir.call "method" "sum"(%x) {op = "sum", args = [1, #sir.arg<0>], kwargs = []} : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @bad_kwargs(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{kwargs must hold #sir.kw<name, value> entries}}
  %0 = sir.call "api" "paddle.exp"(%x) {op = "paddle.exp", args = [#sir.arg<0>], kwargs = [1]} : (tensor<2xf32>) -> tensor<2xf32>
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
  %0 = sir.call "api" "paddle.exp"(%x) {op = "paddle.exp", args = [#sir.arg<0>], kwargs = []} : (tensor<*xf32>) -> tensor<*xf32>
  sir.output %0 : tensor<*xf32>
}

// -----

sir.subgraph @unknown_prim(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'prim' [fill_constant, cast, exp,}}
  %0 = sir.prim relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @implicit_broadcast(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operands must have one type (decompositions broadcast and cast explicitly)}}
  %0 = sir.prim add(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  sir.output %0 : tensor<2x3xf32>
}

// -----

sir.subgraph @arity(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{exp takes 1 operands, not 2}}
  %0 = sir.prim exp(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @compare_type(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{a comparison returns i1 tensors}}
  %0 = sir.prim less_than(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

sir.subgraph @reduce_attrs(%x: tensor<2xf32>) -> tensor<f32> {
  // expected-error @+1 {{a reduction needs axes and keepdim}}
  %0 = sir.prim reduce_max(%x) : (tensor<2xf32>) -> tensor<f32>
  sir.output %0 : tensor<f32>
}

// -----

sir.subgraph @reshape_shape(%x: tensor<6xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{needs a shape equal to its result's}}
  %0 = sir.prim reshape(%x) {shape = array<i64: 3, 2>} : (tensor<6xf32>) -> tensor<2x3xf32>
  sir.output %0 : tensor<2x3xf32>
}

// -----

sir.subgraph @bad_broadcast(%x: tensor<3xf32>) -> tensor<9xf32> {
  // expected-error @+1 {{cannot broadcast 'tensor<3xf32>' to 'tensor<9xf32>'}}
  %0 = sir.prim broadcast_to(%x) {shape = array<i64: 9>} : (tensor<3xf32>) -> tensor<9xf32>
  sir.output %0 : tensor<9xf32>
}

// -----

sir.subgraph @bad_reshape(%x: tensor<6xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reshape changes the element count}}
  %0 = sir.prim reshape(%x) {shape = array<i64: 4>} : (tensor<6xf32>) -> tensor<4xf32>
  sir.output %0 : tensor<4xf32>
}

// -----

sir.subgraph @window_without_pads(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3x2x2xf32> {
  // expected-error @+1 {{window needs kernel, strides, dilations and pads of two values, and a value}}
  %0 = sir.prim window(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, value = 0.0 : f64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3x2x2xf32>
  sir.output %0 : tensor<1x1x3x3x2x2xf32>
}

// -----

sir.subgraph @window_of_other_taps(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2x2x2xf32> {
  // expected-error @+1 {{window takes an NCHW tensor to [N, C, KH, KW, OH, OW]}}
  %0 = sir.prim window(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, value = 0.0 : f64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2x2x2xf32>
  sir.output %0 : tensor<1x1x2x2x2x2xf32>
}

// -----

sir.subgraph @gather_by_floats(%t: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{gather takes a table [V, D...] and an integer index [I...] to the table's rows [I..., D...]}}
  %0 = sir.prim gather(%t, %i) : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  sir.output %0 : tensor<3x4xf32>
}

// -----

sir.subgraph @iota_with_a_value() -> tensor<4xi64> {
  // expected-error @+1 {{iota needs a 1-d shape equal to its result's, and no value}}
  %0 = sir.prim iota() {shape = array<i64: 4>, value = 1.0 : f64} : () -> tensor<4xi64>
  sir.output %0 : tensor<4xi64>
}

// -----

sir.subgraph @iota_of_a_matrix() -> tensor<2x2xi64> {
  // expected-error @+1 {{iota needs a 1-d shape equal to its result's, and no value}}
  %0 = sir.prim iota() {shape = array<i64: 2, 2>} : () -> tensor<2x2xi64>
  sir.output %0 : tensor<2x2xi64>
}

// -----

sir.subgraph @conv2d_groups_not_dividing(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32> {
  // expected-error @+1 {{conv2d takes an NCHW tensor and an [OC, C/groups, KH, KW] weight to [N, OC, OH, OW]}}
  %0 = sir.prim conv2d(%x, %w) {dilations = array<i64: 1, 1>, groups = 3 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32>
  sir.output %0 : tensor<1x6x8x8xf32>
}

// -----

sir.subgraph @conv2d_without_window(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32> {
  // expected-error @+1 {{conv2d needs strides, dilations and pads of two values}}
  %0 = sir.prim conv2d(%x, %w) {strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  sir.output %0 : tensor<1x6x8x8xf32>
}

// -----

sir.subgraph @bad_size(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+2 {{a size is a number times powers of s0..s7 ("64*s0*s1^2"), not 's0+1'}}
  // expected-error @+1 {{failed to parse Sir_SizeAttr parameter 'size'}}
  %0 = sir.call "method" "view"(%x) {args = [#sir.arg<0>, #sir.size<"s0+1">, 8], kwargs = [], op = "torch.Tensor.view"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  sir.output %0 : tensor<?x8xf32>
}

// -----

sir.subgraph @static_size(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{#sir.size holds "8", not a product of sizes (s0*s1)}}
  %0 = sir.call "method" "view"(%x) {args = [#sir.arg<0>, #sir.size<"8">, 8], kwargs = [], op = "torch.Tensor.view"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  sir.output %0 : tensor<?x8xf32>
}

// -----

// expected-error @+1 {{#sir.dims holds "4", not a product of sizes (s0*s1)}}
sir.subgraph @static_dims(%x: tensor<?x8xf32, #sir.dims<"4">>) -> tensor<?x8xf32> {
  sir.output %x : tensor<?x8xf32>
}

// -----

sir.subgraph @argsort_to_f32(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{argsort takes a real tensor to i64 of its shape, with an axis and descending}}
  %0 = sir.prim argsort(%x) {axis = 1 : i64, descending = false} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  sir.output %0 : tensor<4x8xf32>
}

// -----

sir.subgraph @argsort_past_rank(%x: tensor<4x8xf32>) -> tensor<4x8xi64> {
  // expected-error @+1 {{argsort takes a real tensor to i64 of its shape, with an axis and descending}}
  %0 = sir.prim argsort(%x) {axis = 2 : i64, descending = false} : (tensor<4x8xf32>) -> tensor<4x8xi64>
  sir.output %0 : tensor<4x8xi64>
}
