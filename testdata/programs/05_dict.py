# sotc-trace: fn x=float32[8] scale=2.0
import paddle


def fn(x, scale):
    state = {"x": x, "scale": scale}
    state["y"] = state["x"] * state["scale"]
    state.update({"z": state["y"] + 1})
    del state["x"]
    return state
