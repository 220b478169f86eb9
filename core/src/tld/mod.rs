//! TLD (Tracking-Learning-Detection) building blocks, after OpenTLD (Kalal et al.) and seeds 000
//! and 003: the scanning grid and the detection cascade (variance filter, fern ensemble,
//! nearest-neighbour classifier). Layouts are GPU-friendly (structure-of-arrays grids, fern codes
//! as integers) because a later stage runs the cascade on the GPU and must match this code
//! exactly. Everything works in caller-provided storage; nothing allocates.
