//! Clustering of the detector's accepted windows (OpenTLD's `clusterConf`): windows that overlap
//! by more than half (IoU > 0.5), directly or through a chain of such windows, form one cluster,
//! reported as the mean of its boxes and of their confidences.
//!
//! Union–find over at most a few hundred detections in caller storage; clusters are numbered by
//! their lowest detection index, so the output order does not depend on the pairing order.

use crate::geometry::{Rect, RectF};

/// IoU above which two detections belong to the same cluster.
pub(crate) const CLUSTER_OVERLAP: f32 = 0.5;

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[i as usize];
        parent[i as usize] = parent[p as usize];
        i = p;
    }
    i
}

/// Clusters `boxes` (with confidences `conf`, same length ≤ `parent.len()`), writing one mean
/// box and mean confidence per cluster to `out_box` / `out_conf` (at least `boxes.len()` long),
/// and returns the cluster count.
pub(crate) fn cluster(
    boxes: &[Rect],
    conf: &[f32],
    parent: &mut [u32],
    out_box: &mut [RectF],
    out_conf: &mut [f32],
) -> usize {
    let n = boxes.len();
    for (i, p) in parent[..n].iter_mut().enumerate() {
        *p = i as u32;
    }
    for i in 0..n {
        for j in i + 1..n {
            if boxes[i].iou(&boxes[j]) > CLUSTER_OVERLAP {
                let (a, b) = (find(parent, i as u32), find(parent, j as u32));
                // The root is the lowest index of the component.
                let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                parent[hi as usize] = lo;
            }
        }
    }
    let mut count = 0;
    for i in 0..n {
        if find(parent, i as u32) != i as u32 {
            continue;
        }
        // Sums in f64 in index order: exact for integer boxes, one rounding at the end.
        let (mut sx, mut sy, mut sw, mut sh, mut sc, mut m) = (0f64, 0f64, 0f64, 0f64, 0f64, 0);
        for j in i..n {
            if find(parent, j as u32) == i as u32 {
                let b = boxes[j];
                sx += b.x as f64;
                sy += b.y as f64;
                sw += b.width as f64;
                sh += b.height as f64;
                sc += conf[j] as f64;
                m += 1;
            }
        }
        let m = m as f64;
        out_box[count] = RectF::new(
            (sx / m) as f32,
            (sy / m) as f32,
            (sw / m) as f32,
            (sh / m) as f32,
        );
        out_conf[count] = (sc / m) as f32;
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_merge_and_far_boxes_stay_apart() {
        let boxes = [
            Rect::new(0, 0, 10, 10),
            Rect::new(50, 50, 10, 10),
            Rect::new(1, 0, 10, 10),
            Rect::new(2, 0, 10, 10),
        ];
        let conf = [0.2, 0.9, 0.4, 0.6];
        let mut parent = [0u32; 4];
        let mut ob = [RectF::default(); 4];
        let mut oc = [0f32; 4];
        let n = cluster(&boxes, &conf, &mut parent, &mut ob, &mut oc);
        assert_eq!(n, 2);
        assert_eq!(ob[0], RectF::new(1.0, 0.0, 10.0, 10.0));
        assert!((oc[0] - 0.4).abs() < 1e-6);
        assert_eq!(ob[1], RectF::new(50.0, 50.0, 10.0, 10.0));
        assert_eq!(oc[1], 0.9);
    }
}
