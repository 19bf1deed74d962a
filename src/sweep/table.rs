//! `sweep.csv`: one row per grid point, built from the points' `summary.json` files so that a sweep run in
//! one go, in shards, or with any number of threads gives the same bytes.
//!
//! Columns: the swept keys (values as given), `<flow>_gbps` for every flow (each flow's `avg_gbps`; flows
//! in the order they first appear over the points), `jain_contributors`, `fecn_marked` (FECN-marked
//! packets the destinations received, all flows), `cnp_sent` (CNPs the destinations sent, all flows) and
//! `integrity` (`ok`, or what the run's integrity check found broken).
//!
//! `jain_contributors` is Jain's fairness index, (sum x)^2 / (n * sum x^2), over the `avg_gbps` of the
//! *contributors*: the flows whose destination HCA is shared with at least one other flow (the flows that
//! build a hot spot; a victim flow to a destination of its own is left out). With no shared destination it
//! is taken over all flows. Empty when every rate in the set is 0 (the index is undefined).

use serde_json::Value;

/// One point's figures read back from its `summary.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct PointFigures {
    /// `(flow id, destination, avg_gbps)` in scenario order.
    pub flows: Vec<(String, String, f64)>,
    /// FECN-marked packets received, all flows.
    pub fecn_marked: u64,
    /// CNPs sent, all flows.
    pub cnp_sent: u64,
    /// `None`: the integrity check passed; otherwise what broke.
    pub broken: Option<String>,
}

/// Reads the figures out of a `summary.json` text.
pub fn figures(json: &str) -> Result<PointFigures, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| format!("not a summary: {e}"))?;
    let flows = v["flows"]
        .as_array()
        .ok_or("not a summary: no flows array")?;
    let mut out = PointFigures {
        flows: Vec::with_capacity(flows.len()),
        fecn_marked: 0,
        cnp_sent: 0,
        broken: None,
    };
    for f in flows {
        let id = f["id"].as_str().ok_or("a flow without id")?;
        let dst = f["dst"].as_str().ok_or("a flow without dst")?;
        let gbps = f["avg_gbps"].as_f64().ok_or("a flow without avg_gbps")?;
        out.flows.push((id.to_string(), dst.to_string(), gbps));
        out.fecn_marked += f["fecn_marked_rx"].as_u64().unwrap_or(0);
        out.cnp_sent += f["cnp_sent"].as_u64().unwrap_or(0);
    }
    let inv = &v["invariants"];
    let mut broken = Vec::new();
    for (key, what) in [
        ("packets_lost", "packets lost"),
        ("credits_leaked", "credit blocks leaked"),
        ("violations", "lossless violations"),
    ] {
        let n = inv[key].as_u64().ok_or("not a summary: no invariants")?;
        if n != 0 {
            broken.push(format!("{n} {what}"));
        }
    }
    // Written only when not 0.
    if let Some(n) = inv["packets_duplicated"].as_u64().filter(|&n| n != 0) {
        broken.push(format!("{n} packets duplicated"));
    }
    if inv["drained"].as_bool() != Some(true) {
        broken.push("not drained".into());
    }
    out.broken = (!broken.is_empty()).then(|| broken.join("; "));
    Ok(out)
}

/// Jain's index over the contributors (see the module doc), rounded to three decimals.
pub fn jain_contributors(flows: &[(String, String, f64)]) -> Option<f64> {
    let shared = |dst: &str| flows.iter().filter(|f| f.1 == dst).count() > 1;
    let mut xs: Vec<f64> = flows.iter().filter(|f| shared(&f.1)).map(|f| f.2).collect();
    if xs.is_empty() {
        xs = flows.iter().map(|f| f.2).collect();
    }
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (sq > 0.0).then(|| crate::run::round3(sum * sum / (xs.len() as f64 * sq)))
}

/// Quotes a CSV field when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The whole `sweep.csv`: `keys` are the swept keys; each row is a point's values and figures, in grid order.
pub fn csv(keys: &[String], rows: &[(Vec<String>, PointFigures)]) -> String {
    let mut flow_ids: Vec<&str> = Vec::new();
    for (_, f) in rows {
        for (id, _, _) in &f.flows {
            if !flow_ids.contains(&id.as_str()) {
                flow_ids.push(id);
            }
        }
    }
    let mut header: Vec<String> = keys.iter().map(|k| field(k)).collect();
    header.extend(flow_ids.iter().map(|id| field(&format!("{id}_gbps"))));
    header.extend(["jain_contributors", "fecn_marked", "cnp_sent", "integrity"].map(String::from));
    let mut out = header.join(",") + "\n";
    for (values, f) in rows {
        let mut cells: Vec<String> = values.iter().map(|v| field(v)).collect();
        for id in &flow_ids {
            cells.push(
                f.flows
                    .iter()
                    .find(|g| g.0 == *id)
                    .map_or(String::new(), |g| format!("{:.3}", g.2)),
            );
        }
        cells.push(jain_contributors(&f.flows).map_or(String::new(), |j| format!("{j:.3}")));
        cells.push(f.fecn_marked.to_string());
        cells.push(f.cnp_sent.to_string());
        cells.push(field(f.broken.as_deref().unwrap_or("ok")));
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fl(v: &[(&str, &str, f64)]) -> Vec<(String, String, f64)> {
        v.iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), *c))
            .collect()
    }

    #[test]
    fn jain_over_the_flows_sharing_a_destination() {
        // Gran scenario 1: F1 is the victim (alone to H4), F2..F5 share H5.
        let f = fl(&[
            ("F1", "H4", 13.0),
            ("F2", "H5", 4.0),
            ("F3", "H5", 4.0),
            ("F4", "H5", 2.0),
            ("F5", "H5", 2.0),
        ]);
        // (12)^2 / (4 * 40) = 0.9; F1's 13 Gbit/s must not count.
        assert_eq!(jain_contributors(&f), Some(0.9));
        let all = fl(&[("A", "H1", 3.0), ("B", "H2", 1.0)]);
        assert_eq!(
            jain_contributors(&all),
            Some(0.8),
            "no shared dst: all flows"
        );
        assert_eq!(jain_contributors(&fl(&[("A", "H1", 0.0)])), None);
    }

    #[test]
    fn figures_and_csv() {
        let json = r#"{"flows":[{"id":"A","dst":"H3","avg_gbps":7.5,"fecn_marked_rx":4,"cnp_sent":3},
            {"id":"B","dst":"H3","avg_gbps":7.5,"fecn_marked_rx":1,"cnp_sent":1}],
            "invariants":{"packets_lost":0,"credits_leaked":2,"violations":0,"drained":true}}"#;
        let f = figures(json).unwrap();
        assert_eq!((f.fecn_marked, f.cnp_sent), (5, 4));
        assert_eq!(f.broken.as_deref(), Some("2 credit blocks leaked"));
        let csv = csv(
            &["link.0.ends".into()],
            &[(vec!["[\"H1\",\"S1:2\"]".into()], f)],
        );
        assert_eq!(
            csv,
            "link.0.ends,A_gbps,B_gbps,jain_contributors,fecn_marked,cnp_sent,integrity\n\
             \"[\"\"H1\"\",\"\"S1:2\"\"]\",7.500,7.500,1.000,5,4,2 credit blocks leaked\n"
        );
        assert!(figures("{}").is_err());
    }
}
