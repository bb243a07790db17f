//! The networks the lab measures layer by layer: ResNet-50's convolutions, the one place they are
//! written. The conv families' `resnet50` suite runs them and `advise` prices a ResNet-50 step
//! from what those runs measured.

/// A convolution of a network, per image: an `hw` x `hw` input of `c` channels, `k` output
/// channels, an `r` x `r` filter at `stride`, padded by (r - 1) / 2 (what every convolution of
/// ResNet-50 is), run `count` times in a forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv {
    pub hw: u64,
    pub c: u64,
    pub k: u64,
    pub r: u64,
    pub stride: u64,
    pub count: u32,
}

impl Conv {
    /// The output's side: (hw + 2 pad - r) / stride + 1.
    pub fn out_hw(&self) -> u64 {
        (self.hw + 2 * ((self.r - 1) / 2) - self.r) / self.stride + 1
    }
}

const fn conv(hw: u64, c: u64, k: u64, r: u64, stride: u64, count: u32) -> Conv {
    Conv { hw, c, k, r, stride, count }
}

/// ResNet-50's 53 convolutions (torchvision's `resnet50`, v1.5: a bottleneck's stride is on its
/// 3x3), as 23 distinct shapes: the 7x7 stem at 224², then the four stages of 3, 4, 6 and 3
/// bottlenecks (1x1 down to c, 3x3, 1x1 up to 4c), each stage's first block with a strided 1x1
/// projection beside it. The fully connected head is not a convolution.
pub const RESNET50: [Conv; 23] = [
    conv(224, 3, 64, 7, 2, 1),
    // Stage 1, at 56²: the projection (64 -> 256) has the expansion's shape.
    conv(56, 64, 64, 1, 1, 1),
    conv(56, 256, 64, 1, 1, 2),
    conv(56, 64, 64, 3, 1, 3),
    conv(56, 64, 256, 1, 1, 4),
    // Stage 2, 56² -> 28².
    conv(56, 256, 128, 1, 1, 1),
    conv(56, 128, 128, 3, 2, 1),
    conv(56, 256, 512, 1, 2, 1),
    conv(28, 512, 128, 1, 1, 3),
    conv(28, 128, 128, 3, 1, 3),
    conv(28, 128, 512, 1, 1, 4),
    // Stage 3, 28² -> 14².
    conv(28, 512, 256, 1, 1, 1),
    conv(28, 256, 256, 3, 2, 1),
    conv(28, 512, 1024, 1, 2, 1),
    conv(14, 1024, 256, 1, 1, 5),
    conv(14, 256, 256, 3, 1, 5),
    conv(14, 256, 1024, 1, 1, 6),
    // Stage 4, 14² -> 7².
    conv(14, 1024, 512, 1, 1, 1),
    conv(14, 512, 512, 3, 2, 1),
    conv(14, 1024, 2048, 1, 2, 1),
    conv(7, 2048, 512, 1, 1, 2),
    conv(7, 512, 512, 3, 1, 2),
    conv(7, 512, 2048, 1, 1, 3),
];

/// ResNet-50's four stages as (output side, bottleneck width, blocks): each block ends in a 1x1
/// up to 4 x width channels, which the residual add joins, and each stage's first block has a
/// projection of that shape beside it. The same network as `RESNET50`, by stage.
pub const RESNET50_STAGES: [(u64, u64, u32); 4] = [(56, 64, 3), (28, 128, 4), (14, 256, 6), (7, 512, 3)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet50_has_53_convolutions_of_4_1_gflop_an_image() {
        assert_eq!(RESNET50.iter().map(|c| c.count).sum::<u32>(), 53);
        // The figure the literature quotes for ResNet-50 (v1.5): about 4.1 G multiply-adds an
        // image, of which the fully connected head's 2048 x 1000 is 2 M.
        let macs: u64 = RESNET50.iter().map(|c| c.count as u64 * c.out_hw() * c.out_hw() * c.k * c.c * c.r * c.r).sum();
        assert!((4.05e9..4.15e9).contains(&(macs as f64)), "{macs}");
        let stem = RESNET50[0];
        assert_eq!(stem.out_hw(), 112);
        assert_eq!(RESNET50[6].out_hw(), 28);
    }

    #[test]
    fn the_stages_are_the_tables() {
        for (hw, width, blocks) in RESNET50_STAGES {
            // One 3x3 a block, at the stage's width and output side.
            let threes: u32 = RESNET50.iter().filter(|c| c.r == 3 && c.k == width && c.out_hw() == hw).map(|c| c.count).sum();
            assert_eq!(threes, blocks);
            // Each block's expansion, and the projection, have the block's output shape.
            let outs: u32 = RESNET50.iter().filter(|c| c.r == 1 && c.k == 4 * width && c.out_hw() == hw).map(|c| c.count).sum();
            assert_eq!(outs, blocks + 1);
        }
    }
}
