"""FakeData: random images, the same for the same index (torchvision.datasets.FakeData)."""

import ember
from ember.vision.datasets.vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """`size` images of `image_size` (C, H, W) and integer targets in [0, num_classes). Item i
    is drawn from a generator seeded with i + random_offset, so it never changes and the global
    random state is untouched. Images are float32 tensors of standard normal values (torchvision
    turns the same kind of values into PIL images)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = tuple(image_size)
        self.random_offset = random_offset

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        g = ember.Generator().manual_seed(int(index) + self.random_offset)
        img = ember.randn(*self.image_size, generator=g)
        target = int(ember.randint(0, self.num_classes, (1,), generator=g).item())
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return self.size
