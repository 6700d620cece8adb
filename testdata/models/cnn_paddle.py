# sotc-model: make_model x=float32[4,3,16,16]
"""A small CNN: conv-bn-relu blocks, max and adaptive average pooling, a linear head, in
paddle."""
import paddle
from paddle import nn


class CNN(nn.Layer):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(3, 16, 3, padding=1, bias_attr=False), nn.BatchNorm2D(16), nn.ReLU(),
            nn.MaxPool2D(2),
            nn.Conv2D(16, 32, 3, stride=2, padding=1, bias_attr=False), nn.BatchNorm2D(32),
            nn.ReLU(),
            nn.AvgPool2D(2),
        )
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.head(paddle.flatten(x, 1))


def make_model():
    paddle.seed(0)
    model = CNN()
    for layer in model.sublayers():  # running statistics as a trained model has them
        if isinstance(layer, nn.BatchNorm2D):
            layer._mean.set_value(paddle.uniform(layer._mean.shape, min=-0.5, max=0.5))
            layer._variance.set_value(paddle.uniform(layer._variance.shape, min=0.5, max=2.0))
    model.eval()
    return model
