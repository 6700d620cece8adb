# sotc-model: make_model x=float32[2,3,32,32]
"""ResNet-18 (He et al. 2015; paddle.vision's layout: BasicBlocks of conv-bn-relu with 1x1
projection shortcuts), in paddle, at a small input size for CI."""
import paddle
from paddle import nn


class BasicBlock(nn.Layer):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2D(cin, cout, 3, stride, 1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(cout)
        self.conv2 = nn.Conv2D(cout, cout, 3, 1, 1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(cout)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2D(cin, cout, 1, stride, bias_attr=False),
                                            nn.BatchNorm2D(cout))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.relu(out + shortcut)


class ResNet18(nn.Layer):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 64, 7, 2, 3, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(3, 2, 1)
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(paddle.flatten(self.avgpool(x), 1))


def make_model():
    paddle.seed(0)
    model = ResNet18()
    for layer in model.sublayers():  # running statistics as a trained model has them
        if isinstance(layer, nn.BatchNorm2D):
            layer._mean.set_value(paddle.uniform(layer._mean.shape, min=-0.1, max=0.1))
            layer._variance.set_value(paddle.uniform(layer._variance.shape, min=0.5, max=1.5))
    model.eval()
    return model
