//! Management attributes given in TOML (as scenario files will) agree with their wire form, and bad values
//! are reported with the setting's name.

use rtl_model::mad::cct::CctEntry;
use rtl_model::mad::switch_cong::SwitchCongestionSetting;

const SWITCH: &str = r#"
control_map = 0x1F
victim_mask = [0, 35]
credit_mask = []
threshold = 15
packet_size = 8
cs_threshold = 0
cs_return_delay = { shift = 0, multiplier = 0 }
marking_rate = 10
"#;

#[test]
fn switch_congestion_setting_from_toml_matches_the_wire_layout() {
    let s: SwitchCongestionSetting = toml::from_str(SWITCH).expect("parse");
    s.validate().expect("valid");
    let b = s.to_bytes();
    assert_eq!(&b[0..4], &[0, 0, 0, 0x1F], "Control_Map");
    assert_eq!(
        b[35], 0x01,
        "Victim_Mask port 0 = LSB of byte 35 (B4-35, port 0 = LSB of its last byte)"
    );
    assert_eq!(
        b[35 - 4],
        0x08,
        "Victim_Mask port 35 = bit 3 of the fifth byte from the end"
    );
    assert_eq!(b[68] >> 4, 15, "Threshold B68[7:4]");
    assert_eq!(b[69], 8, "Packet_Size B69");
    assert_eq!(&b[74..76], &[0, 10], "Marking_Rate B74-75");
    let back = SwitchCongestionSetting::parse(&b).unwrap();
    assert_eq!(back, s);
    let again: SwitchCongestionSetting = toml::from_str(&toml::to_string(&s).unwrap()).unwrap();
    assert_eq!(again, s);
}

#[test]
fn threshold_above_15_is_named() {
    let bad = SWITCH.replace("threshold = 15", "threshold = 16");
    let s: SwitchCongestionSetting =
        toml::from_str(&bad).expect("parses; range is checked by validate");
    let err = s.validate().unwrap_err().to_string();
    assert!(err.contains("threshold") && err.contains("16"), "{err}");
}

#[test]
fn unknown_keys_and_bad_cct_entries_are_rejected_with_their_names() {
    let err = toml::from_str::<SwitchCongestionSetting>(&format!("{SWITCH}\nthreshhold = 3\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("threshhold"), "{err}");
    let err = toml::from_str::<CctEntry>("shift = 4\nmultiplier = 1\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("shift"), "{err}");
}
